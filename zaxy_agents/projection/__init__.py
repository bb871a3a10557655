"""Graph projection: deterministic extractors, temporal entity versions, provenance, rebuildable stores."""
