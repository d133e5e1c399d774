-- Calibration: what agents claimed (claimed_success) against what the re-score verified.
-- Infra failures are left out. `reports_overturned`: report.json verdicts the re-score changed.
-- params: agent (VARCHAR or NULL for all), trust (VARCHAR or NULL for both)
SELECT agent, model,
    sum(scored) AS evaluations,
    sum(claimed_migrated) AS claimed_and_verified,
    sum(claimed) - sum(claimed_migrated) AS overclaimed,
    sum(underclaimed) AS underclaimed,
    sum(admitted_failure) AS admitted_failure,
    sum(scored) - sum(claim_known) AS no_claim,
    round(sum(claimed_migrated) / nullif(sum(claimed), 0), 4) AS claim_precision,
    round(sum(claimed_migrated) / nullif(sum(claim_known_migrated), 0), 4) AS claim_recall,
    sum(verdict_changed) AS reports_overturned
FROM agent_task_stats
WHERE scored > 0 AND (CAST($agent AS VARCHAR) IS NULL OR agent = CAST($agent AS VARCHAR))
    AND (CAST($trust AS VARCHAR) IS NULL OR trust = CAST($trust AS VARCHAR))
GROUP BY agent, model
ORDER BY overclaimed DESC, agent, model
