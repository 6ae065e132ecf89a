mod export;
