"""The TPC-H workload: the 22 queries (validation parameters) and runners over them."""
