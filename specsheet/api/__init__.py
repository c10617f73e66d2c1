"""The public Python API: everything the CLI can do, as functions that take typed arguments with
the CLI's defaults and return typed results whose ``to_dict()`` is the CLI's ``--json`` document.

This package is the only place where ``specsheet.sources`` (what a user gives) and
``specsheet.plan`` (the questions asked of a model) meet. Nothing here prints or exits; bad input
raises ``SpecError``. One module per question, named for it (``specsheet.api.serve`` holds
``serve``); ``specsheet/__init__.py`` re-exports the functions, each module imported when its
function is first used, so that a command pays only for the question it asks.
"""
