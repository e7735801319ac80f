// placeholder until repair/ lands (issue 4)
