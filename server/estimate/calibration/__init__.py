"""The estimate calibrated from the user's measured profiles (issue 27 item 5): an overlay on the built-in cost
model (``overlay``), the matching of measured instructions to simulated ones (``matching``), the fit
(``fit``) and the calibration file (``store``). The scheduler consults the overlay in one place
(``estimate.schedule``'s cost of a representative instruction); nothing here edits the model's own tables.
"""
