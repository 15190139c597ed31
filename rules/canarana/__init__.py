"""Canarana, MT — Lei Municipal nº 179/1991, the Regulamento dos Serviços de Transportes
Coletivos: the second pack.

`lei_179_1991` is the law as printed (the provisions fiscaliza enforces or records, the
fine's bounds of art. 39 and the payment term of art. 41); `pack` is what the policy
selects by `code = "canarana"`: the law and its automatic detectors. The fines are the
Prefeitura's table (art. 39, parágrafo único), which is the policy's `[fines]`.
"""
