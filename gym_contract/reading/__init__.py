"""Reading rollout inputs: files, stdin and compressed streams, strict JSON text, records of lines and documents."""
