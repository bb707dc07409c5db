"""The settings module of a course project: every size and the dropout rate in one place, read by
the layers through `from hparams import *`."""
width = 12
ff_width = 24
p_drop = 0.1
