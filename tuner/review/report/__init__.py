"""``tuner report``: the HTML page and its parts."""
