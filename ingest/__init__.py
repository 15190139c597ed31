"""Ingest adapters: what a city's buses already report (GTFS-Realtime VehiclePositions, AVL
exports) turned into the tachograph contract (DESIGN.md, "Ingest adapters").

`ingest.fixes` is the pure core (a source's fix -> a tachograph message or a rejection with
its reason); `ingest.gtfs_rt` and `ingest.avl` decode the sources; `ingest.sinks` and
`ingest.run` are the shell (files, Kafka, a URL polled)."""
