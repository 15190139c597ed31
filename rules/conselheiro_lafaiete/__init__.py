"""Conselheiro Lafaiete, MG — Lei Municipal nº 4/1948 (Serviço Rodoviário de Transporte Coletivo).

`lei_4_1948` is the law as printed (its fined infractions, fines in cruzeiros of 1948,
terms and recidivism); `art42a` is the suppressed regular trip, D-22's detector
configured for this law; `pack` is what the policy selects by
`code = "conselheiro-lafaiete"` (kernel/policies/conselheiro-lafaiete.toml).
"""
