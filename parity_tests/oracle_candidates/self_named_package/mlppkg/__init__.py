"""A package (a `src/` layout's project) one of whose sub-folders holds a module of the package's
own name (mlppkg/model/mlppkg.py), its files importing each other absolutely through the package
(`from mlppkg.model.parts import ...`). Our own code."""
