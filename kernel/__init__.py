"""The kernel: what every layer needs and that needs nothing else of ours.

The enforcement policy (`policy`, with the shipped `policies/`), the fleet (`fleet`),
Brazilian money (`money`), the one error base class (`errors`), the settings read from
the environment (`settings`) and the version. It imports no other package of this
repository; see README's layout table for the order of the layers above it.
"""

__version__ = "0.1.0"
