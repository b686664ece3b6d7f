"""One folder per study: its plan's reading, its judge, its figure and its page, on the
shared core (analysis' intervals, figures' style, the record's readers). No study imports
another's folder."""
