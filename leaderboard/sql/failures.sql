-- The failure taxonomy: per category, how many failures it decided (first failing evidence), how
-- often it occurred at all, and the share of the decided failures that were silent (exit 0).
-- Infra and unverified (evidence the grader could not collect) are listed but excluded from scores. Reads the agent_category_stats rollup.
-- params: agent (VARCHAR or NULL for all), trust (VARCHAR or NULL for both)
WITH c AS (
    SELECT category, sum(decided) AS decided, sum(silent) AS silent, sum(occurred) AS occurred
    FROM agent_category_stats
    WHERE (CAST($agent AS VARCHAR) IS NULL OR agent = CAST($agent AS VARCHAR))
      AND (CAST($trust AS VARCHAR) IS NULL OR trust = CAST($trust AS VARCHAR))
    GROUP BY category
)
SELECT category, decided, occurred,
    round(decided / nullif(sum(decided) OVER (), 0), 4) AS share,
    round(coalesce(silent / nullif(decided, 0), 0), 4) AS silent_share,
    category IN ({not_judged}) AS excluded_from_scores
FROM c
ORDER BY decided DESC, occurred DESC, category
