"""What senpi and pi share: senpi is a pi fork and writes the same transcripts (`transcript`), converts them to
the provider context the same way (`context`), marks calls the same way (`calls`), and judges the calls of
stateless lanes from the prompt cache the same way (`turns`, counting with `payload`)."""
