"""The Código Disciplinar as code: Anexo I, one module per automatic detector, the
explicit CATALOGUE mapping codes to rules, and the art. 45 month close.

Detectors are pure functions over the facts of a trip, a service day or a vehicle's
day (`rules.facts`), with every threshold from the policy.
"""
