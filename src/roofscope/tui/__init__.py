"""The Textual front end: panes over a Session; it renders, the layers below compute."""
