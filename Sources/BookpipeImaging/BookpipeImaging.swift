// BookpipeImaging: see DESIGN.md §3.
