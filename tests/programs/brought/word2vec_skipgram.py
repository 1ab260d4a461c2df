# A program people bring (issue 21): word2vec skip-gram with negative sampling as course notebooks write it (two
# Embeddings, bmm, multinomial noise); checked against PyTorch's stdout
import torch
import torch.nn as nn
import torch.nn.functional as F
import random
from collections import Counter

random.seed(0)
torch.manual_seed(0)
corpus = ("the quick brown fox jumps over the lazy dog " * 20 + "a king is a man and a queen is a woman " * 20).split()
vocab = sorted(set(corpus))
word2idx = {w: i for i, w in enumerate(vocab)}
idx2word = {i: w for w, i in word2idx.items()}
counts = Counter(corpus)
freqs = torch.tensor([counts[w] for w in vocab], dtype=torch.float)
noise_dist = freqs ** 0.75 / (freqs ** 0.75).sum()
window = 2
pairs = []
for i, w in enumerate(corpus):
    for j in range(max(0, i - window), min(len(corpus), i + window + 1)):
        if j != i:
            pairs.append((word2idx[w], word2idx[corpus[j]]))
print(len(vocab), len(pairs), pairs[:3])


class SkipGramNeg(nn.Module):
    def __init__(self, n_vocab, n_embed):
        super().__init__()
        self.in_embed = nn.Embedding(n_vocab, n_embed)
        self.out_embed = nn.Embedding(n_vocab, n_embed)
        self.in_embed.weight.data.uniform_(-1, 1)
        self.out_embed.weight.data.uniform_(-1, 1)

    def forward(self, inputs, targets, noise):
        batch = inputs.shape[0]
        inp = self.in_embed(inputs).view(batch, -1, 1)
        out = self.out_embed(targets).view(batch, 1, -1)
        out_loss = torch.bmm(out, inp).sigmoid().log().squeeze()
        noise_vectors = self.out_embed(noise).neg()
        noise_loss = torch.bmm(noise_vectors, inp).sigmoid().log().squeeze().sum(1)
        return -(out_loss + noise_loss).mean()


model = SkipGramNeg(len(vocab), 8)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(30):
    random.shuffle(pairs)
    total = 0.0
    for k in range(0, len(pairs), 64):
        batch = torch.LongTensor(pairs[k:k + 64])
        noise = torch.multinomial(noise_dist, batch.shape[0] * 5, replacement=True).view(batch.shape[0], 5)
        loss = model(batch[:, 0], batch[:, 1], noise)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1}: loss {total:.4f}")
emb = F.normalize(model.in_embed.weight.detach(), dim=1)
for w in ["king", "fox"]:
    sims = emb @ emb[word2idx[w]]
    top = sims.topk(4).indices.tolist()
    print(w, [idx2word[i] for i in top[1:]])
