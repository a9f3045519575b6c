// BookpipeEnrichment: see DESIGN.md §3.
