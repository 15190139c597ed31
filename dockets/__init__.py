"""Autos de infração (Código Disciplinar arts. 4–12): the docket workflow, its deadlines,
the evidence bundle and gráficos, the PDF, and the store they are kept in."""
