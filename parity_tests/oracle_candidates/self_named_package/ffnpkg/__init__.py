"""A package whose folder also holds a module of its own name (ffnpkg/ffnpkg.py), its files
importing each other absolutely through the package (`from ffnpkg.parts import ...`). Our own code."""
