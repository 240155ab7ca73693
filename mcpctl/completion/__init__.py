"""Shell completion: a fast answer to each TAB press, and the scripts that ask for it.

A TAB press runs ``mcpctl __complete SHELL ...`` again. :mod:`~mcpctl.completion.engine`
answers it from ``tree.json`` -- the command tree, generated from the CLI by
:mod:`~mcpctl.completion.generate` and held to it by a test -- and from files read cheaply
(:mod:`~mcpctl.completion.sources`), before the CLI framework is ever imported.
:mod:`~mcpctl.completion.scripts` writes the bash, zsh and fish scripts;
:mod:`~mcpctl.completion.install` puts one where its shell looks.

Nothing is imported here: this package is on the path of every TAB press.
"""
