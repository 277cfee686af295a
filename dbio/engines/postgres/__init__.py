"""PostgreSQL engine: SQL lives in sql/*.sql; Python binds parameters and identifiers."""
