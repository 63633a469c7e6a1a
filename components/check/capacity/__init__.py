"""Capacity: whether everything that runs all the time fits the pools at once (see `judge`)."""
