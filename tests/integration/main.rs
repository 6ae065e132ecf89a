mod digest;
