"""The web app of the Órgão Gerencial and the operators: dockets, defences, appeals (FastAPI + Jinja2)."""
