"""The command line's commands, one module per group; `fiscaliza.cli` registers them."""
