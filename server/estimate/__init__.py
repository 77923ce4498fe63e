"""The estimate of a simulated kernel: its instruction trace scheduled into an estimated timeline (layer: above
``profile``, below ``verify``). One model throughout, and one estimate: the scheduled time.

``cost`` prices one traced instruction; ``trace_plan`` derives what the scheduler needs from the trace's columns;
``schedule`` places every instruction on its engine queue or DMA engines after the instructions it depends on;
``estimated_schedule`` is the one way every estimate schedules a trace: as it runs (``merged_loads``, ``spills``);
``profile`` turns the schedule into the normalised profile model, labelled "estimated"; ``section`` measures it
into a simulation result's ``estimate`` section (per-line table, bounds, investigations) with its roofline point
(``roofline``), and ``heat`` paints that section as an ``nki/heatmap`` payload. ``constants`` holds every constant
the scheduler adds, with its source. Entry points: ``section.estimate_section(trace, generation)`` and
``profile.estimate_profile(trace, target)``. Model: docs/cost-model.md.
"""
