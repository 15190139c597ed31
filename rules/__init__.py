"""The disciplinary codes as code, one rule pack per municipality (`rules.packs`).

Shared: the records (`model`), the facts the detectors read (`facts`), one module per
detector (`d11`, `b04`, ...), occurrences that justify (`justification`) and running a
catalogue safely (`evaluate`). Per municipality: its law as printed and its pack (the
catalogue mapping its codes to detectors), e.g. `rules.joao_neiva`.

Detectors are pure functions over the facts of a trip, a service day or a vehicle's
day, with every threshold from the policy.
"""
