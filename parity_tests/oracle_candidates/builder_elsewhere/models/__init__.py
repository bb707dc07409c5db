"""A project package whose whole model takes its parts (model/translator.py) and is built by a
function of another file of the package (build_model.py), as tutorial projects split them. Our own
code."""
