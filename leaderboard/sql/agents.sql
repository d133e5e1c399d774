-- Leaderboard: one row per agent, model and trust. Verified results (re-executed by the
-- maintainers) are ranked by migrated rate, ties by total cost; self-reported results follow,
-- unranked (rank NULL), never mixed into the ranking.
-- params: agent (VARCHAR or NULL for all), trust (VARCHAR or NULL for both)
-- Rates are over evaluations (task x attempt) the grader could judge: `infra` failures and
-- `unverified` runs (evidence it could not collect) are counted in `infra_excluded` and kept out of
-- every score. Costs are all money spent (infra included) per
-- task attempted. Reads the rollups agent_task_stats and agent_stats (exact, kept at ingest).
WITH r AS (
    SELECT * FROM agent_task_stats
    WHERE (CAST($agent AS VARCHAR) IS NULL OR agent = CAST($agent AS VARCHAR))
      AND (CAST($trust AS VARCHAR) IS NULL OR trust = CAST($trust AS VARCHAR))
), stats AS (
    SELECT
        agent,
        model,
        trust,
        count(*) FILTER (WHERE scored > 0) AS tasks,
        sum(scored) AS evaluations,
        sum(migrated) / nullif(sum(scored), 0) AS migrated_rate,
        sum({criterion}) / nullif(sum(scored), 0) AS {criterion}_rate,
        coalesce(sum(silent_failures) / nullif(sum(failures), 0), 0) AS silent_share,
        (sum(claimed) - sum(claim_known_migrated)) / nullif(sum(claim_known), 0) AS overclaim,
        sum(interventions_sum) / nullif(sum(interventions_n), 0) AS mean_interventions,
        sum(agent_cost_usd) / count(*) AS agent_usd_per_task,
        sum(execution_cost_usd) / count(*) AS execution_usd_per_task,
        coalesce(sum(agent_cost_usd), 0) + coalesce(sum(execution_cost_usd), 0) AS total_usd,
        sum(infra) AS infra_excluded
    FROM r
    GROUP BY agent, model, trust
), ranked AS (
    SELECT *, row_number() OVER (PARTITION BY trust
        ORDER BY migrated_rate DESC NULLS LAST, total_usd, agent, model) AS place
    FROM stats
)
SELECT
    CASE WHEN s.trust = 'verified' THEN s.place END AS rank,
    s.agent, s.model, s.trust, s.tasks, s.evaluations,
    round(s.migrated_rate, 4) AS migrated_rate,
    round(s.{criterion}_rate, 4) AS {criterion}_rate,
    round(s.silent_share, 4) AS silent_share,
    round(s.overclaim, 4) AS overclaim,
    round(s.mean_interventions, 3) AS mean_interventions,
    round(s.agent_usd_per_task, 4) AS agent_usd_per_task,
    round(s.execution_usd_per_task, 4) AS execution_usd_per_task,
    round(s.total_usd, 4) AS total_usd,
    round(p.median_speed_ratio, 3) AS median_speed_ratio,
    s.infra_excluded
FROM ranked s
LEFT JOIN agent_stats p ON p.agent = s.agent AND p.model IS NOT DISTINCT FROM s.model
    AND p.trust = s.trust
ORDER BY s.trust <> 'verified', s.place
