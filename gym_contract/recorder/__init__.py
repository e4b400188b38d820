"""Recording a harness's evidence while it runs: live producers that cannot produce invalid evidence."""
