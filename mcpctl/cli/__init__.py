"""The command-line interface: parses, calls the library, renders. No logic of its own."""
