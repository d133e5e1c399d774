-- Agent cost (model API spend) against execution cost (chip-hours x price table), per agent and
-- per task. `level` says which: 'agent' rows group by agent and model, 'task' rows by task.
-- All evaluations count here, infra included: the money was spent.
-- params: agent (VARCHAR or NULL), task (VARCHAR or NULL), trust (VARCHAR or NULL for both)
WITH r AS (
    SELECT * FROM agent_task_stats
    WHERE (CAST($agent AS VARCHAR) IS NULL OR agent = CAST($agent AS VARCHAR))
      AND (CAST($task AS VARCHAR) IS NULL OR task_id = CAST($task AS VARCHAR))
      AND (CAST($trust AS VARCHAR) IS NULL OR trust = CAST($trust AS VARCHAR))
)
SELECT
    CASE WHEN grouping(task_id) = 1 THEN 'agent' ELSE 'task' END AS level,
    agent, model, task_id,
    sum(evaluations) AS evaluations,
    round(sum(agent_cost_usd), 4) AS agent_usd,
    round(sum(execution_cost_usd), 4) AS execution_usd,
    round(sum(chip_seconds) / 3600, 4) AS chip_hours,
    round(sum(agent_cost_usd) / sum(evaluations), 4) AS agent_usd_per_evaluation,
    round(sum(execution_cost_usd) / sum(evaluations), 4) AS execution_usd_per_evaluation,
    round(sum(agent_cost_usd) / nullif(sum(migrated), 0), 4) AS agent_usd_per_migration,
    array_to_string(list_sort(list_distinct(flatten(list(price_versions)))), ',')
        AS price_versions
FROM r
GROUP BY GROUPING SETS ((agent, model), (task_id))
ORDER BY level, agent NULLS LAST, model NULLS LAST, task_id NULLS LAST
