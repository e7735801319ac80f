// placeholder until topology/ lands (issue 3)
