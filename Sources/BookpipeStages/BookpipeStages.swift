// BookpipeStages: see DESIGN.md §3.
