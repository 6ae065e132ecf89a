//! `--calibrate`: scoring a registry capture against its published scores.
