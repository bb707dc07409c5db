"""An image-captioning course package laid out as assignment starter code often is: layers in
`transformer_layers.py`, models in `classifiers/`, every folder a package (empty `__init__.py`)."""
