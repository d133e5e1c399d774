-- Per task: how many agents (agent + model) migrated it, and which criterion stops the rest.
-- params: task (VARCHAR or NULL for all), trust (VARCHAR or NULL for both)
-- A failed evaluation is stopped by its first failing criterion in grading order (the harness's
-- CRITERIA registry; lines with {criterion} repeat per criterion); the main blocker is the most
-- frequent one (earlier wins ties).
-- Infra failures are left out.
WITH r AS (
    SELECT * FROM agent_task_stats
    WHERE scored > 0 AND (CAST($task AS VARCHAR) IS NULL OR task_id = CAST($task AS VARCHAR))
      AND (CAST($trust AS VARCHAR) IS NULL OR trust = CAST($trust AS VARCHAR))
), per_task AS (
    SELECT task_id,
        count(*) AS agents,
        count(*) FILTER (WHERE migrated > 0) AS agents_migrated,
        sum(scored) AS evaluations,
        sum(migrated) / sum(scored) AS migrated_rate,
        sum(stop_{criterion}) AS s_{criterion}{comma}
    FROM r GROUP BY task_id
), picked AS (
    SELECT *, greatest(
        s_{criterion}{comma}
    ) AS top
    FROM per_task
)
SELECT p.task_id, t.title, p.agents, p.agents_migrated, p.evaluations,
    round(p.migrated_rate, 4) AS migrated_rate,
    CASE WHEN p.top = 0 THEN NULL
         WHEN p.s_{criterion} = p.top THEN '{criterion}'
         END AS main_blocker,
    p.top AS blocked_evaluations
FROM picked p
LEFT JOIN tasks t ON t.task_id = p.task_id
ORDER BY p.migrated_rate, p.task_id
