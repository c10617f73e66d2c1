"""``specsheet explore``: the design (``design.py``, no Textual) and the Textual app (``app.py``,
imported only by the explore command)."""
