"""SQL text to a typed logical plan: parse (sqlglot), bind against the catalog, decorrelate."""
