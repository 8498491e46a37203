x = parseInt('42')
console.log('x is', Math.max(x, 7))
