"""The project's data module: it imports a dataset package the grader does not have."""
import dataset_tools_not_installed as dt  # noqa: F401 - used by the data pipeline, never by the model

PAD_ID = 0
