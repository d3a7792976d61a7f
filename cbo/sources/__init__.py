"""What cbo knows of the data: the catalog file, and the schemas, keys and statistics read from
the sources (a JDBC source through its connector, ``cbo.connectors``; a Spark one through Spark)."""
