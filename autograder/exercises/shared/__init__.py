"""What exercises of several lessons use."""
