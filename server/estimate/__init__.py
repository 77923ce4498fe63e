"""Estimated timeline of a simulated kernel (layer: above ``profile``, below ``simulate``).

``cost`` prices one traced instruction; ``schedule`` places every instruction on its engine queue or DMA
engines after the instructions it depends on; ``profile`` turns the schedule into the normalised profile
model, labelled "estimated". ``constants`` holds every constant the scheduler adds, with its source.
Entry point: ``nki_studio.estimate.profile.estimate_profile(trace, target)``. Model: docs/cost-model.md.
"""
