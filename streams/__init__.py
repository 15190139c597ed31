"""The streaming shell: Kafka topics and (with the Faust workers) the agents that run
the engine's core on them. Agents stay thin: decode raw bytes, call `engine`, send."""
