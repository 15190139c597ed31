"""João Neiva, ES — Lei 867/1998, Código Disciplinar (Anexo I): the reference pack.

`anexo_i` is the law as printed; `pack` is what the policy selects by
`code = "joao-neiva"`: the law, its automatic detectors and its deadlines.
"""
