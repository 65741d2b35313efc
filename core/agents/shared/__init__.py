"""Code two or more agents share, so that no agent imports another: the pi family (`pi_family`: senpi and pi)
and the counters of agents that re-send their whole conversation to a stateless API (`stateless`)."""
