"""DuckDB store, ingestion, queries, export and site for the leaderboard."""
