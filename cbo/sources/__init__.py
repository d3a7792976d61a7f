"""Where the data lives: catalog files, the schemas and keys read from sources, statistics
collection, loading Parquet into databases, and the throwaway local database servers."""
