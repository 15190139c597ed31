"""The `fiscaliza` command line (typer). Entry points only parse and delegate."""

from __future__ import annotations

import sys

import typer

from fiscaliza.commands import dockets, feed, ingest, kafka, ops, replay, web
from fiscaliza.commands.common import EXIT_BAD_INPUT

app = typer.Typer(
    name="fiscaliza",
    help="Enforces a municipality's bus disciplinary code from telemetry (the policy names the law; default: João Neiva, Lei 867/1998).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for group in (replay, feed, kafka, dockets, ops, web, ingest):
    group.register(app)


def main() -> None:
    """Console entry point: usage errors and every FiscalizaError (a bad file, argument or
    broker) become one line and exit code 2, here and nowhere else."""
    from fiscaliza.process import tune_garbage_collector
    from kernel.errors import FiscalizaError

    tune_garbage_collector()
    try:
        code = app(standalone_mode=False)
    except FiscalizaError as exc:
        print(f"fiscaliza: error: {exc}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)
    except (KeyboardInterrupt, typer.Abort):
        print("fiscaliza: interrupted", file=sys.stderr)
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:
        # Usage errors (typer vendors its own click, so match by shape, not class).
        if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
            reason = exc.format_message() or "no command given (see fiscaliza --help)"
            print(f"fiscaliza: error: {reason}", file=sys.stderr)
            sys.exit(EXIT_BAD_INPUT)
        raise
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
